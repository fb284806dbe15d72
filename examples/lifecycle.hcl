# Task lifecycle hooks: an ephemeral prestart task, a prestart sidecar that keeps running,
# the main task, a poststart task and a poststop cleanup task.
job "lifecycle" {
  type = "batch"

  group "app" {
    task "init" {
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo preparing > $${NOMAD_ALLOC_DIR}/ready"]
      }
      resources {
        memory = 32
      }
    }

    task "sidecar" {
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo sidecar alive; sleep 5; done"]
      }
      resources {
        memory = 32
      }
    }

    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat $${NOMAD_ALLOC_DIR}/ready; sleep 5; echo main done"]
      }
      resources {
        memory = 32
      }
    }

    task "announce" {
      lifecycle {
        hook = "poststart"
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo main task started"]
      }
      resources {
        memory = 32
      }
    }

    task "cleanup" {
      lifecycle {
        hook = "poststop"
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "rm -f $${NOMAD_ALLOC_DIR}/ready; echo cleaned up"]
      }
      resources {
        memory = 32
      }
    }
  }
}
