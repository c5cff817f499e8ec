package projectrun

import "testing"

// TestComposer: composer's command runs the scripts its events and its
// name give (through @NAME, @php and @composer; a vendor/bin command
// holds vendor, a PHP callback its class's file and directory), and
// the plugins installed in vendor are held on every command.
func TestComposer(t *testing.T) {
	project := files{
		"/r/composer.json": `{
			"autoload": {"psr-4": {"App\\": "src/"}},
			"scripts": {
				"command": "./tools/every.sh",
				"post-install-cmd": ["@putenv X=1", "@php bin/setup.php", "App\\Hooks\\Install::run"],
				"test": ["@lint", "phpunit --colors"],
				"lint": "@composer validate",
				"pre-status-cmd": "./status.sh",
				"loop": "@loop",
				"ext": "Vendor\\Pkg\\Cls::go"
			}
		}`,
		"/r/vendor/bin/phpunit":             "#!/usr/bin/env php\n<?php include __DIR__.'/../phpunit/phpunit/phpunit';\n",
		"/r/vendor/composer/installed.json": `{"packages": [{"name": "acme/plugin", "type": "composer-plugin", "install-path": "../acme/plugin"}, {"name": "acme/lib", "type": "library"}]}`,
		"/r/sub/composer.json":              `{"scripts": {"x": "./x.sh"}}`,
	}
	for _, tc := range []struct {
		name, cmd   string
		files, dirs []string
		notes       []string
	}{
		{"install: the install events, a callback's class, plugins", "composer install --no-interaction",
			[]string{"/r/composer.json", "/r/composer.lock", "/r/auth.json", "/r/vendor/composer/installed.json", "/r/tools/every.sh", "/r/bin/setup.php", "/r/src/Hooks/Install.php"},
			[]string{"/r/vendor/acme/plugin", "/r/bin", "/r/src/Hooks"}, []string{"PHP method App\\Hooks\\Install::run"}},
		{"a script by its name, its references, vendor/bin", "composer test",
			[]string{"/r/composer.json", "/r/composer.lock", "/r/auth.json", "/r/vendor/composer/installed.json", "/r/tools/every.sh", "/r/vendor/bin/phpunit"},
			[]string{"/r/vendor/acme/plugin", "/r/vendor"}, []string{"runs phpunit from vendor/bin"}},
		{"run-script in another directory; a script that refers to itself", "composer -d sub run-script x && composer run loop",
			[]string{"/r/sub/composer.json", "/r/sub/composer.lock", "/r/sub/auth.json", "/r/sub/vendor/composer/installed.json", "/r/sub/x.sh",
				"/r/composer.json", "/r/composer.lock", "/r/auth.json", "/r/vendor/composer/installed.json", "/r/tools/every.sh"},
			[]string{"/r/vendor/acme/plugin"}, nil},
		{"exec: a command of vendor/bin", "composer exec -v phpunit",
			[]string{"/r/composer.json", "/r/composer.lock", "/r/auth.json", "/r/vendor/composer/installed.json", "/r/vendor/bin/phpunit", "/r/tools/every.sh"},
			[]string{"/r/vendor/acme/plugin", "/r/vendor"}, []string{"runs phpunit from vendor/bin"}},
		{"status's events; a package's callback holds vendor", "composer status; composer ext",
			[]string{"/r/composer.json", "/r/composer.lock", "/r/auth.json", "/r/vendor/composer/installed.json", "/r/tools/every.sh", "/r/status.sh"},
			[]string{"/r/vendor/acme/plugin", "/r/vendor"}, []string{"a class the project does not map"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tc.cmd)), Project{Read: project.read, Home: "/home/u"})
			wantNames(t, n, tc.files, tc.dirs, tc.notes)
		})
	}
}
