<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;
use Lectern\Exception\ServerException;

/**
 * Sends one HTTP request and returns whatever response came back, whatever its status. Redirects
 * are not followed. Implement it to route requests through your own HTTP stack (a proxy, a PSR-18
 * client, a test double).
 */
interface HttpClient
{
    /** The most bytes a response body may hold, once decompressed, unless a client is told otherwise. */
    public const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

    /**
     * @param array<string, string> $headers by name
     * @param float                 $timeout seconds for the whole request, reading the body included
     *
     * @throws ConnectionException when no response arrived (refused, reset, DNS failure, timeout)
     * @throws ServerException     when the body is larger than the client accepts
     */
    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse;
}
