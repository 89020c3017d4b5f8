/** An ajv standalone validator: returns whether `data` is valid and leaves the reasons on `errors`. */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: ReadonlyArray<{ instancePath: string; message?: string; keyword: string; params: object }> | null;
}

/** Validators keyed by "<apiVersion>/<kind>", e.g. "apps/v1/Deployment". */
export declare const validators: Readonly<Record<string, SchemaValidator>>;
