-- Gone: memory_keyword_postings() classes the common terms, on one PostgreSQL as on a
-- Citus worker.
DROP FUNCTION public.memory_common_lexemes(text[]);
