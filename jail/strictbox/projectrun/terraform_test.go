package projectrun

import "testing"

// TestTerraform: a command that loads the configuration holds its files,
// the local modules they source (in turn), .terraform's providers and
// the lock file, and the paths the programs it runs name, and says what
// it cannot follow; fmt and version load none.
func TestTerraform(t *testing.T) {
	project := files{
		"/r/main.tf":                "module \"vpc\" {\n  source = \"./modules/vpc\"\n}\nmodule \"reg\" {\n  source = \"hashicorp/consul/aws\"\n}\n",
		"/r/data.tf":                "data \"external\" \"v\" {\n  program = [\"python3\", \"${path.module}/scripts/ver.py\"]\n}\n",
		"/r/prod.tfvars":            "x = 1\n",
		"/r/README.md":              "",
		"/r/modules/vpc/main.tf":    "resource \"null_resource\" \"n\" {\n  provisioner \"local-exec\" {\n    command = \"./hooks/post.sh arg\"\n  }\n}\ndata \"external\" \"m\" {\n  program = [\"sh\", \"${path.module}/m.sh\"]\n}\n",
		"/r/infra/main.tf":          "",
		"/r/infra/envs/dev.tfvars":  "",
		"/r/modules/vpc/outputs.tf": "",
	}
	for _, tc := range []struct {
		name, cmd   string
		files, dirs []string
		notes       []string
	}{
		{"validate at the root: files, modules, providers, programs", "terraform validate",
			[]string{"/r/.terraform.lock.hcl", "/r/.terraformrc", "/r/terraform.rc", "/r/data.tf", "/r/scripts/ver.py", "/r/main.tf", "/r/modules/vpc/main.tf", "/r/hooks/post.sh", "/r/modules/vpc/m.sh", "/r/modules/vpc/outputs.tf", "/r/prod.tfvars"},
			[]string{"/r/.terraform", "/r/modules/vpc"}, []string{"terraform runs the programs its configuration's external data sources"}},
		{"tofu -chdir, a var file", "tofu -chdir=infra plan -var-file=envs/dev.tfvars",
			[]string{"/r/infra/.terraform.lock.hcl", "/r/infra/.terraformrc", "/r/infra/terraform.rc", "/r/infra/envs/dev.tfvars", "/r/infra/main.tf"},
			[]string{"/r/infra/.terraform"}, nil},
		{"fmt and version load nothing", "terraform fmt -check && terraform -version", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tc.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			wantNames(t, n, tc.files, tc.dirs, tc.notes)
		})
	}
}
