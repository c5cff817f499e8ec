// Package playback plays a transcript (package transcript) back for
// "aisan logs".
//
// [Print] plays a launch's file, by default through a [Renderer], a
// terminal emulator (github.com/charmbracelet/x/vt) of the sizes recorded
// beside it, so that what a full-screen agent drew (prompts, answers,
// everything it pushed into scrollback) reads as text; raw on request;
// and following the file until the launch ends. Whatever the transcript
// holds, what reaches the user's terminal carries no control that the
// terminal would act on.
package playback
