-- Whether a memory's vector fits an entry of memories_scope_vectors_key beside its keys: a
-- b-tree entry holds at most 2,704 bytes, and an entry is its tenant and repository, the
-- vector (8 bytes and 4 a dimension), and at most about 90 bytes of included columns
-- (id, a type of at most 40 ASCII characters, trust, relevance, created_at). At 384
-- dimensions a tenant and repository of up to 864 bytes fit: every ASCII name (100 and
-- 300 characters at most). A row that does not fit is left out of the index, and a search
-- whose scope's names do not fit reads its rows instead (memory_vector_candidates()); a
-- model of more than 600 dimensions never fits. The index's predicate and the search's
-- test of a scope call this one function, so that the planner proves the one from the
-- other. LANGUAGE sql and IMMUTABLE, with no SET: inlined on both sides.
CREATE OR REPLACE FUNCTION public.memory_vector_indexable(tenant_id text, source_repo text, embedding public.vector)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT octet_length(tenant_id) + coalesce(octet_length(source_repo), 0)
           + 4 * public.vector_dims(embedding) <= 2400
$function$;
