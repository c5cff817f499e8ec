package projectrun

import (
	"slices"
	"strings"
	"testing"
)

// TestDefiners: a task runner or build tool that runs what files in the
// directory it runs in define (rake, bundle, nox, invoke, tox, Gradle,
// Maven) has those files held, found there or in the nearest directory
// above, its code followed as its interpreter loads it, what the words
// of its files name held, and the launch says it could not follow the
// commands; bundle exec's command is read in turn. A Python build (pip
// install ., python -m pip install -e ./lib, uv sync, poetry install)
// holds the project's files and follows its setup.py; a requirements
// file pip reads is held.
func TestDefiners(t *testing.T) {
	project := files{
		"/r/Rakefile":              "task :build do\n  sh 'tools/build.sh'\nend\nrequire_relative 'lib/tasks'\n",
		"/r/lib/tasks.rb":          "",
		"/r/Gemfile":               "gem 'rspec'\n",
		"/r/noxfile.py":            "import helpers\n",
		"/r/helpers.py":            "",
		"/r/tasks.py":              "",
		"/r/tox.ini":               "[testenv]\ncommands = python tools/check.py\n",
		"/r/sub/pom.xml":           "<project/>\n",
		"/r/build.gradle":          "apply from: 'gradle/extra.gradle'\n",
		"/r/setup.py":              "import version\n",
		"/r/version.py":            "",
		"/r/lib/setup.py":          "",
		"/r/lib/pyproject.toml":    "",
		"/r/requirements.txt":      "# dev\n-r more/extra.txt\n",
		"/r/more/extra.txt":        "--editable=../pkg[test]\nrequests==2\n",
		"/r/pkg/setup.py":          "import helper\n",
		"/r/pkg/helper.py":         "",
		"/r/pyproject.toml":        "",
		"/r/deep/x/.keep":          "",
		"/r/web/eslint.config.js":  "import rules from './lint/rules.js'\n",
		"/r/web/lint/rules.js":     "",
		"/r/web/vite.config.ts":    "import { plugin } from '../tools/vite-plugin'\n",
		"/r/tools/vite-plugin.ts":  "",
		"/r/app/.eslintrc.json":    `{"extends": ["./base.js", "airbnb"], "plugins": ["react", "@acme"], "rules": {"semi": "error"}}`,
		"/r/app/base.js":           "require('../shared/rules')\n",
		"/r/shared/rules.js":       "",
		"/r/app/.prettierrc":       "plugins:\n  - ./prettier/local.js\n",
		"/r/app/prettier/local.js": "",
		"/r/compose.yaml":          "services: {}\n",
		"/r/ops/db.yml":            "services: {}\n",
		"/r/node_modules/eslint-config-airbnb/package.json": "{}",
		"/r/node_modules/eslint-plugin-react/package.json":  "{}",
		"/r/node_modules/@acme/eslint-plugin/package.json":  "{}",
		"/r/node_modules/semi/package.json":                 "{}",
		"/r/site/mkdocs.yml":                                "site_name: x\nhooks:\n  - hooks/links.py\nplugins:\n  - search\n",
		"/r/site/hooks/links.py":                            "import shared\n",
		"/r/site/hooks/shared.py":                           "",
		"/r/py/mypy.ini":                                    "[mypy]\nplugins = tools.mypy_plugin, pydantic.mypy\n",
		"/r/py/tools/mypy_plugin.py":                        "",
		"/r/lintpy/.pylintrc":                               "[MASTER]\nload-plugins=checkers.style\ninit-hook='import sys; sys.path.append(\"x\")'\n",
		"/r/lintpy/checkers/style/__init__.py":              "",
		"/r/docs/conf.py":                                   "import sys\nsys.path.insert(0, '..')\nimport ext\n",
		"/r/docs/ext.py":                                    "",
	}
	for _, tt := range []struct {
		name, cmd   string
		files, dirs []string
		note        string
	}{
		{"rake, from below", `cd deep/x && rake build`, []string{"/r/Rakefile", "/r/lib/tasks.rb", "/r/tools/build.sh"}, []string{"/r/rakelib"}, "rake runs the tasks or build Rakefile defines"},
		{"bundle exec", `bundle exec rake`, []string{"/r/Gemfile", "/r/Gemfile.lock", "/r/Rakefile"}, []string{"/r/.bundle"}, "bundle runs the tasks or build Gemfile defines"},
		{"nox", `nox -s tests`, []string{"/r/noxfile.py", "/r/helpers.py"}, nil, "nox runs the tasks or build noxfile.py defines"},
		{"invoke", `invoke build`, []string{"/r/tasks.py"}, []string{"/r/tasks"}, "invoke runs the tasks or build tasks.py defines"},
		{"tox", `tox -e py`, []string{"/r/tox.ini", "/r/tools/check.py", "/r/setup.py", "/r/version.py"}, nil, "tox runs the tasks or build tox.ini defines"},
		{"mvn -f", `mvn -q -f sub/pom.xml test`, []string{"/r/sub/pom.xml", "/r/pom.xml"}, []string{"/r/.mvn"}, "mvn runs the tasks or build sub/pom.xml defines"},
		{"./gradlew", `./gradlew build`, []string{"/r/gradlew", "/r/build.gradle", "/r/settings.gradle", "/r/gradle/extra.gradle"}, []string{"/r/gradle", "/r/buildSrc", "/r/.gradle"}, "gradlew runs the tasks or build build.gradle defines"},
		{"pip install -e .", `pip install -e .`, []string{"/r/setup.py", "/r/version.py", "/r/pyproject.toml"}, nil, ""},
		{"python -m pip install ./lib", `python3 -m pip install --user ./lib`, []string{"/r/lib/setup.py", "/r/lib/pyproject.toml"}, nil, ""},
		{"pip install -r, and what it names in turn", `pip3 install -r requirements.txt`, []string{"/r/requirements.txt", "/r/more/extra.txt", "/r/pkg/setup.py"}, []string{"/r/pkg"}, ""},
		{"pip install with extras", `pip install -e ".[dev]"`, []string{"/r/setup.py", "/r/version.py"}, nil, ""},
		{"uv sync", `uv sync --frozen`, []string{"/r/pyproject.toml", "/r/uv.lock", "/r/setup.py"}, nil, ""},
		{"poetry install", `poetry install`, []string{"/r/pyproject.toml", "/r/poetry.lock"}, nil, ""},
		{"eslint, its config followed", `cd web && npx eslint --fix src`, []string{"/r/web/eslint.config.js", "/r/web/lint/rules.js"}, nil, ""},
		{"vitest from below", `cd web/src && vitest run`, []string{"/r/web/vite.config.ts", "/r/tools/vite-plugin.ts"}, nil, ""},
		{"eslint's JSON config: extends, plugins", `cd app && eslint .`, []string{"/r/app/.eslintrc.json", "/r/app/base.js", "/r/shared/rules.js"}, []string{"/r/node_modules/eslint-config-airbnb", "/r/node_modules/eslint-plugin-react", "/r/node_modules/@acme/eslint-plugin"}, ""},
		{"docker compose, -f", `docker compose -f ops/db.yml up -d; docker-compose up`, []string{"/r/compose.yaml", "/r/ops/db.yml", "/r/.env"}, nil, ""},
		{"mkdocs: its hooks", `cd site && mkdocs build`, []string{"/r/site/mkdocs.yml", "/r/site/hooks/links.py"}, []string{"/r/site/hooks"}, ""},
		{"mypy: a plugin module of the project", `cd py && mypy .`, []string{"/r/py/mypy.ini", "/r/py/tools/mypy_plugin.py", "/r/py/pydantic/mypy.py"}, []string{"/r/py/tools"}, ""},
		{"pylint: load-plugins, init-hook", `cd lintpy && pylint src`, []string{"/r/lintpy/.pylintrc", "/r/lintpy/checkers/style/__init__.py"}, nil, "pylint runs the init-hook lintpy/.pylintrc holds"},
		{"sphinx-build: conf.py in its source directory", `sphinx-build -b html -j 2 docs _build`, []string{"/r/docs/conf.py"}, []string{"/r/docs"}, ""},
		{"prettier's YAML config: a local plugin", `cd app && prettier -w .`, []string{"/r/app/.prettierrc", "/r/app/prettier/local.js"}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			checkHolds(t, n, tt.files, tt.dirs)
			if all := strings.Join(n.Notes, "\n"); tt.note != "" && !strings.Contains(all, tt.note) {
				t.Errorf("notes lack %q:\n%s", tt.note, all)
			}
			// A name a tool might look for that is not there gets no
			// mount point (it is no program).
			for _, p := range n.Programs {
				if project.read(p) == nil && (strings.Contains(p, "config") || strings.Contains(p, "rc")) {
					t.Errorf("a missing definition file is held as a program: %s", p)
				}
			}
		})
	}
}

// TestPackageJSONConfig: a tool whose configuration sits under its key
// of package.json (the nearest from where it runs up that has the key)
// holds that package.json and follows the configuration; one without
// the key holds no package.json.
func TestPackageJSONConfig(t *testing.T) {
	project := files{
		"/r/package.json":     `{"name": "r", "lint-staged": {"*.js": "node tools/check.js"}, "eslintConfig": {"extends": ["./tools/eslint-base.js"]}}`,
		"/r/tools/check.js":   "",
		"/r/web/package.json": `{"name": "web"}`,
	}
	for _, tc := range []struct {
		cmd   string
		has   []string
		hasnt []string
	}{
		{"cd web && npx lint-staged", []string{"/r/package.json", "/r/tools/check.js"}, []string{"/r/web/package.json"}},
		{"npx eslint .", []string{"/r/package.json", "/r/tools/eslint-base.js"}, nil},
		{"npx prettier -c .", nil, []string{"/r/package.json"}},
	} {
		n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tc.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
		for _, p := range tc.has {
			if !slices.Contains(n.Files, p) {
				t.Errorf("%s: files lack %s: %q", tc.cmd, p, n.Files)
			}
		}
		for _, p := range tc.hasnt {
			if slices.Contains(n.Files, p) {
				t.Errorf("%s: files hold %s: %q", tc.cmd, p, n.Files)
			}
		}
	}
}
