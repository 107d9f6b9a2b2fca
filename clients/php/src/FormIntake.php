<?php

declare(strict_types=1);

namespace Lectern;

/** Where a site posts a form (`$url`, absolute), and whether it takes posts now (its intake is on and it is active). */
final class FormIntake implements \JsonSerializable
{
    public function __construct(
        public readonly bool $enabled,
        public readonly string $url,
    ) {
    }

    /** @param array<string, mixed> $item the `intake` object as the API sends it */
    public static function fromArray(array $item): self
    {
        return new self($item['enabled'] ?? null, $item['url'] ?? null);
    }

    /** @return array{enabled: bool, url: string} the API's fields, in its order */
    public function toArray(): array
    {
        return ['enabled' => $this->enabled, 'url' => $this->url];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
