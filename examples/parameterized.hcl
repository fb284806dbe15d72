# A parameterized batch job: registered once, then dispatched with metadata and a payload.
#   caravan job dispatch -meta name=world greet payload.txt
variable "sleep_seconds" {
  type    = number
  default = 1
}

job "greet" {
  type = "batch"

  parameterized {
    payload       = "optional"
    meta_required = ["name"]
    meta_optional = ["greeting"]
  }

  meta {
    greeting = "hello"
  }

  group "greet" {
    task "say" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.txt"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"$${NOMAD_META_greeting} $${NOMAD_META_name}\"; cat local/input.txt 2>/dev/null; sleep ${var.sleep_seconds}"]
      }

      resources {
        memory = 32
      }
    }
  }
}
