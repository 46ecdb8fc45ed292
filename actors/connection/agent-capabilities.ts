/**
 * What each agent of a connection says it can do (`PUT /api/agent/capabilities`, sent at
 * its start and again after an outage): per framework, the latest report, kept durably (a
 * record, and in snapshots). The dashboard shows a control the job system cannot do as
 * disabled with the agent's reason; a connection may have one agent per framework.
 */
import type { Framework } from '../ingest/states.ts';
import type { CommandType } from './command-types.ts';

export type ControlSupport = { supported: true } | { supported: false; reason: string };

export interface AgentCapabilities {
  framework: Framework;
  agentVersion: string;
  reportedAtMs: number;
  controls: Record<string, ControlSupport>;
}

export class CapabilityBook {
  private readonly byFramework = new Map<Framework, AgentCapabilities>();

  get(framework: Framework): AgentCapabilities | undefined {
    return this.byFramework.get(framework);
  }

  values(): IterableIterator<AgentCapabilities> {
    return this.byFramework.values();
  }

  set(report: AgentCapabilities): void {
    this.byFramework.set(report.framework, report);
  }

  /** Whether a report says the same as the kept one (then it changes nothing worth a record). */
  same(report: Omit<AgentCapabilities, 'reportedAtMs'>): boolean {
    const kept = this.byFramework.get(report.framework);
    return kept !== undefined && kept.agentVersion === report.agentVersion && JSON.stringify(kept.controls) === JSON.stringify(report.controls);
  }

  /**
   * What the framework's agent said of a command type: undefined when no agent of that
   * framework reported (an agent from before the controls); a type its report leaves out
   * is one that agent version does not know.
   */
  support(framework: string, type: CommandType): ControlSupport | undefined {
    const report = this.byFramework.get(framework as Framework);
    if (report === undefined) return undefined;
    return report.controls[type] ?? { supported: false, reason: `this agent version (${report.agentVersion}) does not know '${type}'` };
  }

  toSnapshot(): AgentCapabilities[] {
    return [...this.byFramework.values()];
  }

  restore(reports: readonly AgentCapabilities[]): void {
    for (const report of reports) this.set(report);
  }
}
