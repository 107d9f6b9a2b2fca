<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\AuthenticationException;
use Lectern\Exception\InvalidRequestException;
use Lectern\Exception\LecternException;
use Lectern\Exception\NotFoundException;
use Lectern\Exception\PermissionException;
use Lectern\Exception\RateLimitException;
use Lectern\Exception\ServerException;
use Lectern\Exception\ServiceUnavailableException;

/**
 * Turns an error response into the exception it stands for.
 *
 * @internal
 */
final class ErrorMapper
{
    /** Error codes with the phrase a server started with `ERROR_STYLE=phrase` sends instead. */
    public const ERROR_TYPES = [
        'invalid_parameters' => 'Invalid parameters',
        'bad_request' => 'Bad request',
        'missing_authorization_header' => 'Missing authorization header',
        'invalid_authorization_format' => 'Invalid authorization format',
        'invalid_api_key' => 'Invalid API key',
        'api_key_inactive' => 'API key inactive',
        'insufficient_permissions' => 'Insufficient permissions',
        'resource_not_found' => 'Resource not found',
        'method_not_allowed' => 'Method not allowed',
        'request_timeout' => 'Request timeout',
        'uri_too_long' => 'URI too long',
        'rate_limit_exceeded' => 'Rate limit exceeded',
        'request_header_fields_too_large' => 'Request header fields too large',
        'internal_error' => 'Internal server error',
        'service_unavailable' => 'Service unavailable',
    ];

    /** @var array<int, class-string<LecternException>> */
    private const CLASS_BY_STATUS = [
        400 => InvalidRequestException::class,
        401 => AuthenticationException::class,
        403 => PermissionException::class,
        404 => NotFoundException::class,
        // The client only sends GET, so a 405 means a proxy or a wrong base URL: a request to fix.
        405 => InvalidRequestException::class,
        408 => InvalidRequestException::class,
        414 => InvalidRequestException::class,
        429 => RateLimitException::class,
        431 => InvalidRequestException::class,
        500 => ServerException::class,
        503 => ServiceUnavailableException::class,
    ];

    public static function fromResponse(HttpResponse $response, ?int $now = null): LecternException
    {
        $body = json_decode($response->body, true);
        $label = \is_array($body) && \is_string($body['error'] ?? null) ? $body['error'] : null;
        $type = null;
        if ($label !== null) {
            $type = isset(self::ERROR_TYPES[$label]) ? $label : (array_search($label, self::ERROR_TYPES, true) ?: null);
        }
        $message = \is_array($body) && \is_string($body['message'] ?? null)
            ? $body['message']
            : \sprintf('Unexpected HTTP %d response from Lectern', $response->status);
        $class = self::CLASS_BY_STATUS[$response->status] ?? null;
        if ($class === null || $type === null) {
            $class = match (true) {
                $response->status === 503 => ServiceUnavailableException::class,
                $response->status === 429 => RateLimitException::class,
                $response->status >= 500 || $response->status < 400 => ServerException::class,
                default => $class ?? LecternException::class,
            };
        }

        return new $class(
            $message,
            $type ?? 'unexpected_response',
            $response->status,
            $response->header('x-request-id'),
            self::parseRetryAfter($response->header('retry-after'), $now ?? time()),
        );
    }

    /** `Retry-After` in seconds: either a number of seconds or an HTTP date. */
    public static function parseRetryAfter(?string $value, int $now): ?int
    {
        if ($value === null || trim($value) === '') {
            return null;
        }
        $value = trim($value);
        if (ctype_digit($value)) {
            return (int) $value;
        }
        $date = strtotime($value);

        return $date === false ? null : max(0, $date - $now);
    }
}
