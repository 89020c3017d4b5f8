/**
 * `slotProps` of a select TextField rendered as a native <select> (MUI-styled): keyboard and
 * screen readers get the platform's own widget, and the label stays above the value.
 */
export const NATIVE_SELECT = { select: { native: true }, inputLabel: { shrink: true } } as const;
