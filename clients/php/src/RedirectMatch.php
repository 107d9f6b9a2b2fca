<?php

declare(strict_types=1);

namespace Lectern;

/** What a request that matches a redirect gets: the status and the `Location` header value (a path, never absolute). */
final class RedirectMatch implements \JsonSerializable
{
    /**
     * @param 301|302 $status   301 only when every redirect of the chain followed is permanent
     * @param string  $location the final destination, percent-encoded, with the request's query string
     */
    public function __construct(
        public readonly int $status,
        public readonly string $location,
    ) {
    }

    /** @return array{status: int, location: string} */
    public function toArray(): array
    {
        return ['status' => $this->status, 'location' => $this->location];
    }

    /** @return array{status: int, location: string} */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
