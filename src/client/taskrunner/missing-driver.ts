/**
 * A stand-in for a driver the node does not have: every start fails unrecoverably with a
 * message naming the driver, so the task ends "Not Restarting" instead of crashing the agent.
 */
import type { Driver, DriverCapabilities, DriverFingerprint, ExecSpec, ExitResult, TaskHandle, TaskResourceUsage, TaskStatus } from '../../drivers/driver.js';
import { DriverError, DriverErrorCode, FsIsolation } from '../../drivers/driver.js';

/** A Driver whose every operation fails with "driver not available". */
export class MissingDriver implements Driver {
  constructor(readonly name: string) {}

  private fail(): never {
    throw new DriverError(DriverErrorCode.Unsupported, `driver "${this.name}" is not available on this node`, false);
  }

  /** Nothing is known of a driver that is not there: no isolation is assumed (fails closed). */
  capabilities(): DriverCapabilities {
    return { fsIsolation: FsIsolation.None };
  }

  async fingerprint(): Promise<DriverFingerprint> {
    return { detected: false, healthy: false, healthDescription: 'not available', attributes: {} };
  }
  async startTask(): Promise<TaskHandle> {
    return this.fail();
  }
  async recoverTask(): Promise<void> {
    this.fail();
  }
  async waitTask(): Promise<ExitResult> {
    return this.fail();
  }
  async stopTask(): Promise<void> {
    this.fail();
  }
  async destroyTask(): Promise<void> {}
  inspectTask(): TaskStatus {
    return this.fail();
  }
  async signalTask(): Promise<void> {
    this.fail();
  }
  execSpec(): ExecSpec {
    return this.fail();
  }
  async taskStats(): Promise<TaskResourceUsage> {
    return this.fail();
  }
  async shutdown(): Promise<void> {}
}
