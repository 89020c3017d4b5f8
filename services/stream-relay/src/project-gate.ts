import type { ProjectOf, SessionProjects } from "./session-projects.ts";

/**
 * Hands each frame of one feed on with its session's project, in the order the frames came.
 * A cached project passes at once; a frame that needs a lookup holds the frames behind it
 * until the lookup answers (one lookup per session per relay, so this is rare). A lookup that
 * fails (after its retries) drops the frame and reports it: never deliver unchecked.
 */
export class ProjectGate {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly projects: SessionProjects,
    private readonly onUnavailable: (err: unknown) => void,
  ) {}

  pass(sessionId: string, deliver: (project: ProjectOf) => void): void {
    if (this.waiting === 0) {
      const hit = this.projects.cached(sessionId);
      if (hit !== undefined) {
        deliver(hit);
        return;
      }
    }
    this.waiting++;
    this.tail = this.tail.then(async () => {
      try {
        const projects = await this.projects.resolve([sessionId]);
        deliver(projects.get(sessionId) ?? null);
      } catch (err) {
        this.onUnavailable(err);
      } finally {
        this.waiting--;
      }
    });
  }
}
