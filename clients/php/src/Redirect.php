<?php

declare(strict_types=1);

namespace Lectern;

/** A URL redirect (`GET /api/v1/page-builder/redirects`); paths are stored percent-decoded. */
final class Redirect implements \JsonSerializable
{
    /**
     * @param 'permanent'|'temporary' $type
     */
    public function __construct(
        public readonly string $id,
        public readonly string $fromPath,
        public readonly string $toPath,
        public readonly string $type,
        public readonly bool $isActive,
        public readonly string $createdAt,
        public readonly string $updatedAt,
    ) {
    }

    /** @param array<string, mixed> $item an item as the API sends it */
    public static function fromArray(array $item): self
    {
        return new self(
            $item['id'] ?? null,
            $item['fromPath'] ?? null,
            $item['toPath'] ?? null,
            $item['type'] ?? null,
            $item['isActive'] ?? null,
            $item['createdAt'] ?? null,
            $item['updatedAt'] ?? null,
        );
    }

    public function isPermanent(): bool
    {
        return $this->type === 'permanent';
    }

    /** @return array<string, mixed> the API's fields, in its order */
    public function toArray(): array
    {
        return [
            'id' => $this->id,
            'fromPath' => $this->fromPath,
            'toPath' => $this->toPath,
            'type' => $this->type,
            'isActive' => $this->isActive,
            'createdAt' => $this->createdAt,
            'updatedAt' => $this->updatedAt,
        ];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
