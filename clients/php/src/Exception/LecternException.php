<?php

declare(strict_types=1);

namespace Lectern\Exception;

/**
 * Any failure of a Lectern request. `type` is the API's error code (`invalid_api_key`,
 * `rate_limit_exceeded`, …; `unexpected_response` when the body was not the API's error envelope,
 * `connection_error` when no response came); `status` the HTTP status (null without a response);
 * `requestId` the response's `X-Request-Id`, to quote when reporting a problem. Each kind of failure
 * has a subclass, so `catch (NotFoundException $e)` reads as what it handles.
 */
class LecternException extends \RuntimeException
{
    /**
     * @param string      $type       The API's error type (always the code form, even from a server
     *                                started with `ERROR_STYLE=phrase`).
     * @param int|null    $status     The HTTP status, or null when no response was received.
     * @param string|null $requestId  The response's `X-Request-Id`.
     * @param int|null    $retryAfter Seconds the server asked to wait (`Retry-After`), when it did.
     */
    public function __construct(
        string $message,
        public readonly string $type,
        public readonly ?int $status = null,
        public readonly ?string $requestId = null,
        public readonly ?int $retryAfter = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status ?? 0, $previous);
    }

    public function getType(): string
    {
        return $this->type;
    }

    public function getHttpStatus(): ?int
    {
        return $this->status;
    }

    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    public function getRetryAfter(): ?int
    {
        return $this->retryAfter;
    }
}
