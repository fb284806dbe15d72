# A task that fails a few seconds after it starts, restarted twice then given up on: a crash
# loop to diagnose with caravan alloc status and caravan alloc logs -stderr.
job "crashy" {
  datacenters = ["*"]

  group "g" {
    restart {
      attempts = 2
      interval = "5m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo starting; sleep 1; echo 'cannot open /etc/crashy.conf: no such file' >&2; exit 1"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
