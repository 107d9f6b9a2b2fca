<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 429 `rate_limit_exceeded`: over the hourly or per-second limit; `retryAfter` says when to try again. */
final class RateLimitException extends LecternException
{
}
