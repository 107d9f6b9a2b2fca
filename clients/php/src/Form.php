<?php

declare(strict_types=1);

namespace Lectern;

/** A form (`GET /api/v1/forms`). */
final class Form implements \JsonSerializable
{
    public function __construct(
        public readonly string $id,
        public readonly string $title,
        public readonly ?string $description,
    ) {
    }

    /** @param array<string, mixed> $item an item as the API sends it */
    public static function fromArray(array $item): self
    {
        return new self($item['id'] ?? null, $item['title'] ?? null, $item['description'] ?? null);
    }

    /** @return array{id: string, title: string, description: string|null} the API's fields, in its order */
    public function toArray(): array
    {
        return ['id' => $this->id, 'title' => $this->title, 'description' => $this->description];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
