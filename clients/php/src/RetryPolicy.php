<?php

declare(strict_types=1);

namespace Lectern;

use Lectern\Exception\LecternException;

/**
 * When a failed request is tried again. Only `429` and `503` are: the server asked to wait, and a
 * list `GET` is safe to repeat. Connection failures are not retried, as in the other clients.
 */
final class RetryPolicy
{
    private const RETRIED_STATUSES = [429, 503];

    /**
     * @param int   $maxRetries retries after the first attempt
     * @param float $baseDelay  seconds: the first wait when the server gives no `Retry-After`, doubled
     *                          on each retry; also the most jitter added to a `Retry-After`, so that
     *                          many clients do not all come back at once
     * @param float $maxDelay   seconds: the longest wait before a retry. A longer `Retry-After` (an
     *                          exhausted hourly quota) is not waited for: the exception is thrown at
     *                          once, carrying `retryAfter`.
     */
    public function __construct(
        public readonly int $maxRetries = 2,
        public readonly float $baseDelay = 0.5,
        public readonly float $maxDelay = 30.0,
    ) {
        if ($maxRetries < 0 || $baseDelay < 0 || $maxDelay < 0) {
            throw new \InvalidArgumentException('RetryPolicy: maxRetries, baseDelay and maxDelay must not be negative');
        }
    }

    /**
     * Seconds to wait before retry number `$attempt + 1` after `$error`, or null to give up. A
     * `Retry-After` is honoured (never waited less) with up to `baseDelay` of jitter on top; without
     * one the wait doubles from `baseDelay` per attempt, with "equal jitter" (half to all of it).
     *
     * @param callable(): float $random a number in [0, 1)
     */
    public function delay(LecternException $error, int $attempt, callable $random): ?float
    {
        if ($attempt >= $this->maxRetries || !\in_array($error->status, self::RETRIED_STATUSES, true)) {
            return null;
        }
        $delay = $error->retryAfter !== null
            ? $error->retryAfter + $random() * $this->baseDelay
            : min($this->maxDelay, $this->baseDelay * 2 ** $attempt) * (0.5 + $random() / 2);

        return $delay <= $this->maxDelay ? $delay : null;
    }
}
