-- A Citus search in one call, run on the worker that holds the tenant's shard: there the
-- query's keyword hits are read (memory_keyword_postings(), owner rights, the GIN index;
-- `all_terms` for a keyword-only search) and `statement`, the search the service wrote for
-- these values (app/repository/search_statement.py), runs with them as its one parameter
-- and answers one jsonb value.
-- The coordinator plans only this call; the statement is planned once, on the worker,
-- as Citus would have sent it there (its values are constants, as Citus writes them).
-- Invoker rights: the statement can do only what the caller could do with it anyway,
-- under row-level security; and Citus refuses, inside a delegated call, a query that does
-- not filter by the tenant the call was routed by.
CREATE OR REPLACE FUNCTION public.memory_search_on_worker(tenant text, query text, max_rows integer, filters memory_filter, all_terms boolean, statement text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'public'
AS $function$
DECLARE
    postings jsonb;
    answer jsonb;
BEGIN
    postings := public.memory_keyword_postings(tenant, query, max_rows, filters, all_terms);
    EXECUTE statement INTO answer USING postings;
    RETURN answer;
END
$function$;
