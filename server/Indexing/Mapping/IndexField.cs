namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// One field of an index entry as a map produced it. <see cref="Value"/> is one of: <c>null</c>,
/// <see cref="bool"/>, <see cref="long"/>, <see cref="double"/>, <see cref="string"/>,
/// <see cref="IndexJson"/> (an object, kept as its JSON text), or an <see cref="IReadOnlyList{T}"/> of
/// <c>object?</c> holding any of those (an array: one term per element). A field the map did not
/// return is simply absent (missing is not null).
/// </summary>
public readonly record struct IndexField(string Name, object? Value);
