# A job no client can hold: it asks for 1 TiB of memory. Try it to see how Caravan says why
# nothing was placed: caravan job run examples/too-big.hcl, then caravan job status too-big.
job "too-big" {
  datacenters = ["*"]

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      resources {
        cpu    = 100
        memory = 1048576
      }
    }
  }
}
