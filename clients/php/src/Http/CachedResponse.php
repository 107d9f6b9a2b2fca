<?php

declare(strict_types=1);

namespace Lectern\Http;

/** A body remembered with its `ETag`, to send back in `If-None-Match` and reuse on `304`. */
final class CachedResponse
{
    public function __construct(
        public readonly string $etag,
        public readonly string $body,
    ) {
    }
}
