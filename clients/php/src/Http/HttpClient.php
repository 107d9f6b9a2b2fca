<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;

/**
 * Sends one HTTP request and returns whatever response came back, whatever its status. Redirects
 * are not followed. Implement it to route requests through your own HTTP stack (a proxy, a PSR-18
 * client, a test double).
 */
interface HttpClient
{
    /**
     * @param array<string, string> $headers by name
     * @param float                 $timeout seconds for the whole request
     *
     * @throws ConnectionException when no response arrived (refused, reset, DNS failure, timeout)
     */
    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse;
}
