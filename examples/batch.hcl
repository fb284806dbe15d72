# A batch job: runs to completion once, retried by the batch restart policy if it fails.
job "report" {
  type = "batch"

  group "report" {
    count = 1

    task "generate" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo generating report; sleep 2; echo done"]
      }

      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
