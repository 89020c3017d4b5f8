import { CONSUMERS, type ConsumerKey, STREAMS, type StreamKey } from "@tarsy/contracts";
import { BusInvalidOptionsError } from "./errors.ts";

const PREFIX_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const SUFFIX_RE = /^[A-Za-z0-9_-]*$/;

/**
 * Maps the catalog's relative subjects and stream names onto one deployment:
 * `work.runner.x` → `<prefix>.work.runner.x`, `TARSY_WORK` → `TARSY_WORK<suffix>`.
 */
export class Naming {
  readonly prefix: string;
  readonly streamSuffix: string;

  constructor(prefix: string, streamSuffix: string) {
    if (!PREFIX_RE.test(prefix)) {
      throw new BusInvalidOptionsError(`prefix "${prefix}" must be dot-separated tokens`);
    }
    if (!SUFFIX_RE.test(streamSuffix)) {
      throw new BusInvalidOptionsError(`streamSuffix "${streamSuffix}" may hold [A-Za-z0-9_-]`);
    }
    this.prefix = prefix;
    this.streamSuffix = streamSuffix;
  }

  subject(relative: string): string {
    return `${this.prefix}.${relative}`;
  }

  /** The relative subject of an absolute one, or undefined when it is outside the prefix. */
  relative(subject: string): string | undefined {
    const head = `${this.prefix}.`;
    return subject.startsWith(head) ? subject.slice(head.length) : undefined;
  }

  stream(key: StreamKey): string {
    return `${STREAMS[key].name}${this.streamSuffix}`;
  }

  streamKeyOf(name: string): StreamKey | undefined {
    return (Object.keys(STREAMS) as StreamKey[]).find((key) => this.stream(key) === name);
  }

  durable(key: ConsumerKey): string {
    return CONSUMERS[key].durable;
  }
}
