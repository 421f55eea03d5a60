/** The bundled model's identity, without its runtime: what the catalog and the rules need to know of it. */
export const USE_MODEL_ID = "use-lite-512";
export const USE_DIMENSION = 512;
