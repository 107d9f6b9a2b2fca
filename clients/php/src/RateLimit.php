<?php

declare(strict_types=1);

namespace Lectern;

/** The key's hourly rate-limit state, from a response's `X-RateLimit-*` headers. */
final class RateLimit
{
    /**
     * @param int $limit     requests the key may make per hour (`X-RateLimit-Limit`)
     * @param int $remaining requests left in the current hourly window (`X-RateLimit-Remaining`)
     * @param int $reset     Unix time, in seconds, when the hourly window ends (`X-RateLimit-Reset`)
     */
    public function __construct(
        public readonly int $limit,
        public readonly int $remaining,
        public readonly int $reset,
    ) {
    }
}
