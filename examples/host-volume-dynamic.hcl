# A dynamic host volume (Nomad 1.10): `caravan volume create examples/host-volume-dynamic.hcl`,
# then mount it from a group with `volume "data" { type = "host" source = "counter-data" }`.
type      = "host"
name      = "counter-data"
plugin_id = "mkdir"
node_pool = "default"

constraint {
  attribute = "${attr.kernel.name}"
  value     = "linux"
}

capacity_min = "1GiB"
capacity_max = "10GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

# exec tasks run as nobody unless the job sets `user`: let them write.
parameters {
  mode = "0777"
}
