-- tarsy:custom
-- pgvector where this server has it (#24): memory search then ranks embeddings by pgvector's
-- cosine distance, over HNSW indexes made per dimension (ensureMemoryVectorIndexes). A
-- server without the extension, or a role that may not create it, keeps comparing arrays in
-- SQL: nothing here fails. An operator can run `CREATE EXTENSION vector` later; services
-- pick it up when they restart.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')
     AND NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    BEGIN
      CREATE EXTENSION vector;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pgvector is available but was not created (%); memory search compares arrays', SQLERRM;
    END;
  END IF;
END
$$;
