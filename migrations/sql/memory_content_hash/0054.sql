-- The dedup key and the integrity check: the database computes it, so writers and the
-- read-time check never disagree on what "normalised" means. The digest of the text in
-- Unicode's NFC, trimmed of whitespace, each run of whitespace inside made one space: the
-- digest migration 0001 defined, computed only as far as a text needs (migration 0054).
-- Most texts are already NFC and hold no whitespace to fold: normalising and folding them
-- anyway took 30 us a text, and a search checks 20 (app/repository/search_statement.py).
-- `IS NFC NORMALIZED` is normalize()'s own test, and a text that matches none of tab, line
-- ends, form feed, vertical tab, two spaces, or a space at either end has nothing the fold
-- would change. tests/repository/test_content_hash.py holds it to 0001's expression.
CREATE OR REPLACE FUNCTION public.memory_content_hash(content text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE STRICT PARALLEL SAFE
AS $function$
DECLARE
    normalised text := CASE WHEN content IS NFC NORMALIZED THEN content
                            ELSE normalize(content, NFC) END;
BEGIN
    IF normalised ~ E'[\t\n\r\f\v]|  |^ | $' THEN
        normalised := regexp_replace(btrim(normalised, E' \t\n\r\f\v'),
                                     E'[ \t\n\r\f\v]+', ' ', 'g');
    END IF;
    RETURN encode(sha256(convert_to(normalised, 'UTF8')), 'hex');
END
$function$;
