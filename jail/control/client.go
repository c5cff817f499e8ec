package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"syscall"
	"time"
)

// ErrNoBox is wrapped by [Call] when nothing serves the socket: the box
// ended, or its host side is not one that takes requests.
var ErrNoBox = errors.New("nothing serves the box's control socket")

// Call sends req (Proto filled in) to the control socket at path and
// returns the answer.
func Call(path string, req Request) (Response, error) {
	req.Proto = Proto
	c, err := net.DialTimeout("unix", path, deadline)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return Response{}, fmt.Errorf("%w (%s)", ErrNoBox, path)
	}
	if err != nil {
		return Response{}, fmt.Errorf("reaching the box's control socket %s: %w", path, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	unanswered := errors.New("the box's host side answered nothing (it refuses requests from inside a jail or a box, and from other users)")
	if _, err := c.Write(encode(req)); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return Response{}, unanswered
		}
		return Response{}, fmt.Errorf("sending to the box's control socket: %w", err)
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxAnswer), 4096).ReadBytes('\n')
	if err != nil {
		if len(line) == 0 {
			return Response{}, unanswered
		}
		return Response{}, fmt.Errorf("reading the box's answer: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("the box's answer does not parse: %w", err)
	}
	return resp, nil
}
