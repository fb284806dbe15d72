package compat

import "testing"

// Nomad's Go client's Agent().Self(): the config sections clients read (ACL, UI, Telemetry) are there.
func TestAgentSelfConfigSections(t *testing.T) {
	self, err := client.Agent().Self()
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"ACL", "UI", "Telemetry"} {
		if _, ok := self.Config[section].(map[string]interface{}); !ok {
			t.Fatalf("config section %s missing: %v", section, self.Config[section])
		}
	}
	if enabled, _ := self.Config["ACL"].(map[string]interface{})["Enabled"].(bool); enabled {
		t.Fatalf("ACL.Enabled on an agent without acl: %v", self.Config["ACL"])
	}
}
