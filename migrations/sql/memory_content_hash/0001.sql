-- The dedup key and the integrity check: the database computes it, so writers and the
-- read-time check never disagree on what "normalised" means.
CREATE OR REPLACE FUNCTION public.memory_content_hash(content text)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN encode(sha256(convert_to(
    regexp_replace(btrim(normalize(content, NFC), E' \t\n\r\f\v'),
                   E'[ \t\n\r\f\v]+', ' ', 'g'),
    'UTF8')), 'hex');
