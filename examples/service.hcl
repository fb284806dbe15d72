# A long-running service: three copies of a shell loop, run by raw_exec.
# Try it: caravan agent -dev, then caravan job run examples/service.hcl
job "web" {
  datacenters = ["*"]
  type        = "service"

  group "web" {
    count = 3

    network {
      port "http" {}
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo \"alloc $${NOMAD_ALLOC_INDEX} alive on port $${NOMAD_PORT_http}\"; sleep 10; done"]
      }

      env {
        GREETING = "hello from caravan"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
