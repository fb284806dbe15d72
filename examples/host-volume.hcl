# A stateful task keeping its data on a client's host volume. The client offers the volume in
# its agent configuration:
#
#   client {
#     host_volume "counter-data" {
#       path      = "/srv/counter"
#       read_only = false
#     }
#   }
#
# The scheduler places the group only on clients offering "counter-data"; the task sees the
# directory at /data (exec: bound into its sandbox; docker: a bind mount).
job "counter" {
  datacenters = ["dc1"]
  type        = "service"

  group "counter" {
    volume "data" {
      type      = "host"
      source    = "counter-data"
      read_only = false
    }

    task "count" {
      driver = "exec"

      volume_mount {
        volume      = "data"
        destination = "/data"
      }

      # The task's workload identity as NOMAD_TOKEN: with it the task may read its job's
      # variables (nomad/jobs/counter), through the agent or its Task API socket secrets/api.sock.
      identity {
        env = true
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "n=$(cat /data/count 2>/dev/null || echo 0); echo $((n + 1)) > /data/count; exec sleep 3600"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
