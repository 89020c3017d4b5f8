/** Checks of `system` that need more than one field: notifications' credentials, promotions. */
import type { ConfigIssue } from "./errors.ts";
import type { SystemConfig } from "./types.ts";

const TIME_HINT = "want RFC 3339 (2026-01-31T00:00:00Z) or YYYY-MM-DD";

export function systemIssues(
  system: SystemConfig,
  env: Readonly<Record<string, string | undefined>>,
  file: string,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const issue = (path: string, message: string) => issues.push({ file, path, message });

  const { slack } = system;
  if (slack.enabled) {
    if (!slack.channel) issue("system.slack.channel", "Slack is enabled but no channel is set");
    if (!env[slack.token_env]) {
      issue(
        "system.slack.token_env",
        `Slack is enabled but environment variable ${slack.token_env} (the bot token) is not set`,
      );
    }
  }
  system.notifications.webhooks.forEach((hook, index) => {
    if (hook.secret_env && !env[hook.secret_env]) {
      issue(
        `system.notifications.webhooks[${index}].secret_env`,
        `environment variable ${hook.secret_env} (the webhook's signing secret) is not set`,
      );
    }
  });

  const promotions = system.cost_estimation.promotions;
  promotions.forEach((promotion, index) => {
    const path = `system.cost_estimation.promotions[${index}]`;
    if (Number.isNaN(promotion.end_ms)) issue(`${path}.end`, TIME_HINT);
    if (promotion.start_ms !== null && Number.isNaN(promotion.start_ms)) {
      issue(`${path}.start`, TIME_HINT);
    }
    if (
      promotion.start_ms !== null &&
      !Number.isNaN(promotion.start_ms) &&
      promotion.end_ms <= promotion.start_ms
    ) {
      issue(`${path}.end`, `promotion "${promotion.id}" ends before it starts`);
    }
  });
  for (let i = 0; i < promotions.length; i++) {
    for (let j = i + 1; j < promotions.length; j++) {
      const a = promotions[i];
      const b = promotions[j];
      if (!a || !b || a.model !== b.model) continue;
      const aStart = a.start_ms ?? Number.NEGATIVE_INFINITY;
      const bStart = b.start_ms ?? Number.NEGATIVE_INFINITY;
      if (aStart < b.end_ms && bStart < a.end_ms) {
        issue(
          `system.cost_estimation.promotions[${j}]`,
          `promotion "${b.id}" overlaps promotion "${a.id}" for model ${a.model}`,
        );
      }
    }
  }
  return issues;
}
