<?php

declare(strict_types=1);

namespace Lectern\Http;

/**
 * Where the client remembers the `ETag` and body of the pages it fetched, by URL. The cache belongs
 * to one client (one API key): do not share one between keys.
 */
interface ResponseCache
{
    public function get(string $url): ?CachedResponse;

    public function set(string $url, CachedResponse $response): void;
}
