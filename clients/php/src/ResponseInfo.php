<?php

declare(strict_types=1);

namespace Lectern;

/**
 * What the client saw of the latest response it received (`$lectern->lastResponse`): its status
 * (`304` when a remembered page was revalidated and reused), its `X-Request-Id`, and the key's
 * rate-limit state (null when the response carried no `X-RateLimit-*` headers, e.g. a `401`).
 */
final class ResponseInfo
{
    public function __construct(
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        public readonly string $url,
        public readonly ?string $etag,
    ) {
    }
}
