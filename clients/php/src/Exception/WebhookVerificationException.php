<?php

declare(strict_types=1);

namespace Lectern\Exception;

/**
 * A webhook delivery that is not provably from Lectern, or not from now: answer it with a 4xx and
 * drop it. `reason` says why: `missing_header`, `invalid_timestamp`, `stale_timestamp`,
 * `invalid_signature`, `invalid_secret` or `invalid_payload`. No request failed, so it is not a
 * {@see LecternException}.
 */
final class WebhookVerificationException extends \RuntimeException
{
    public function __construct(public readonly string $reason, string $message, ?\Throwable $previous = null)
    {
        parent::__construct($message, 0, $previous);
    }
}
