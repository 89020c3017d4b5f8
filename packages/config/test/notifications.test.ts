import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

describe("system.slack and system.notifications", () => {
  it("default to Slack off and no webhooks", () => {
    const { config } = load({ tarsy: "" });
    expect(config.system.slack).toEqual({
      enabled: false,
      token_env: "SLACK_BOT_TOKEN",
      channel: "",
      api_url: "https://slack.com/api/",
      fingerprint_label: "slack_message_fingerprint",
      fingerprint_annotation: "slack_message_fingerprint",
    });
    expect(config.system.notifications.webhooks).toEqual([]);
  });

  it("read the Go TARSy's keys, ours beside them; webhooks default to the four outcomes and action requests", () => {
    const { config, warnings } = load(
      {
        tarsy: `
system:
  slack:
    enabled: true
    token_env: OPS_SLACK_TOKEN
    channel: C0OPS
    api_url: https://slack.internal/api
    fingerprint_label: thread
  notifications:
    webhooks:
      - url: https://hooks.example.com/a
      - url: https://hooks.example.com/b
        events: [started, failed]
        secret_env: HOOK_SECRET
`,
      },
      { OPS_SLACK_TOKEN: "xoxb-1", HOOK_SECRET: "s" },
    );
    expect(warnings.filter((w) => w.path.startsWith("system"))).toEqual([]);
    expect(config.system.slack).toMatchObject({
      enabled: true,
      token_env: "OPS_SLACK_TOKEN",
      channel: "C0OPS",
      api_url: "https://slack.internal/api/",
      fingerprint_label: "thread",
      fingerprint_annotation: "slack_message_fingerprint",
    });
    expect(config.system.notifications.webhooks).toEqual([
      {
        url: "https://hooks.example.com/a",
        events: [...TERMINAL_SESSION_STATUSES, "action_requested"],
      },
      {
        url: "https://hooks.example.com/b",
        events: ["started", "failed"],
        secret_env: "HOOK_SECRET",
      },
    ]);
  });

  it("refuse Slack enabled without a channel or without its token, and a secret that is not set", () => {
    const issues = loadIssues({
      tarsy: `
system:
  slack: { enabled: true }
  notifications:
    webhooks:
      - { url: "https://hooks.example.com/a", secret_env: MISSING_SECRET }
`,
    });
    expect(issues.map((i) => [i.path, i.message])).toEqual([
      ["system.slack.channel", "Slack is enabled but no channel is set"],
      [
        "system.slack.token_env",
        "Slack is enabled but environment variable SLACK_BOT_TOKEN (the bot token) is not set",
      ],
      [
        "system.notifications.webhooks[0].secret_env",
        "environment variable MISSING_SECRET (the webhook's signing secret) is not set",
      ],
    ]);
  });

  it("refuse a webhook that is no URL or asks for an event there is none of", () => {
    const issues = loadIssues({
      tarsy: `
system:
  notifications:
    webhooks:
      - { url: "not a url" }
      - { url: "https://hooks.example.com/c", events: [resolved] }
`,
    });
    expect(issues.map((i) => i.path)).toEqual([
      "system.notifications.webhooks[0].url",
      "system.notifications.webhooks[1].events[0]",
    ]);
  });

  it("Slack off may leave the channel and token unset", () => {
    expect(() =>
      load({ tarsy: "system:\n  slack: { enabled: false, channel: C1 }\n" }),
    ).not.toThrow();
  });
});
