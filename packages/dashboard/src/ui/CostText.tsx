import Tooltip from "@mui/material/Tooltip";
import type { CostTotals } from "@tarsy/contracts";
import { describeCost } from "./format.ts";

/**
 * An estimated cost ("$0.0123"); partial or missing estimates explain themselves on hover or
 * focus (the tooltip describes the text for assistive technology).
 */
export function CostText(props: { cost: CostTotals }) {
  const { text, note } = describeCost(props.cost);
  const body = (
    <span
      className="cost"
      data-completeness={props.cost.cost_completeness}
      tabIndex={note ? 0 : undefined}
      style={{ fontVariantNumeric: "tabular-nums" }}
    >
      {text}
    </span>
  );
  return note ? (
    <Tooltip title={note} describeChild>
      {body}
    </Tooltip>
  ) : (
    body
  );
}
