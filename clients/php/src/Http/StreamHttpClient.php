<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;

/**
 * {@see HttpClient} over PHP's stream functions (`file_get_contents` with an `http` stream context),
 * for hosts without ext-curl. Needs `allow_url_fopen` on; `https://` needs ext-openssl.
 */
final class StreamHttpClient implements HttpClient
{
    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse
    {
        if (!filter_var(\ini_get('allow_url_fopen'), FILTER_VALIDATE_BOOLEAN)) {
            throw new \LogicException('StreamHttpClient needs allow_url_fopen=On (or install ext-curl)');
        }
        $headerLines = ['Connection: close'];
        foreach ($headers as $name => $value) {
            $headerLines[] = $name . ': ' . $value;
        }
        $context = stream_context_create([
            'http' => [
                'method' => $method,
                'header' => $headerLines,
                // Error statuses are responses to read, not failures of the request.
                'ignore_errors' => true,
                'follow_location' => 0,
                'max_redirects' => 1,
                'timeout' => $timeout,
                // HTTP/1.1 (the wrapper decodes chunked bodies) with `Connection: close`.
                'protocol_version' => 1.1,
            ],
        ]);
        error_clear_last();
        // The wrapper reports refused connections and timeouts as warnings; they become the exception below.
        $body = @file_get_contents($url, false, $context);
        $lines = \function_exists('http_get_last_response_headers')
            ? (http_get_last_response_headers() ?? [])
            : ($http_response_header ?? []);
        if ($body === false || $lines === []) {
            $error = error_get_last()['message'] ?? 'no response';
            $parts = parse_url($url);
            $origin = ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . (isset($parts['port']) ? ':' . $parts['port'] : '');
            throw new ConnectionException(\sprintf('Could not reach Lectern at %s: %s', $origin, preg_replace('/^file_get_contents\([^)]*\): /', '', $error)), 'connection_error');
        }
        [$status, $parsed] = HttpResponse::parseHeaderLines($lines);

        return new HttpResponse($status, $parsed, $body);
    }
}
