-- Gone: the search's keyword side reads every term in one call of memory_keyword_postings(),
-- on one PostgreSQL as on a Citus worker.
DROP FUNCTION public.memory_keyword_hits(tsquery, integer, public.memory_filter);
