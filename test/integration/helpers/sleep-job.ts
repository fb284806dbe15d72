/**
 * The HCL of a one-group raw_exec job that sleeps for a minute, without deployments
 * (`max_parallel = 0`): the job the integration tests of job actions, system routes and the
 * scheduler configuration register, parse and change.
 */
export interface SleepJobOptions {
  count?: number;
  /** One env var, `V`: changing it makes a new job version. */
  env?: string;
  cpu?: number;
  memory?: number;
}

export function sleepJobHcl(id: string, { count, env, cpu = 100, memory = 64 }: SleepJobOptions = {}): string {
  const countLine = count === undefined ? '' : `\n    count = ${count}`;
  const envBlock = env === undefined ? '' : `\n      env {\n        V = "${env}"\n      }`;
  return `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {${countLine}
    update {
      max_parallel = 0
    }
    task "t" {
      driver = "raw_exec"${envBlock}
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      resources {
        cpu    = ${cpu}
        memory = ${memory}
      }
    }
  }
}`;
}
