namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>An object value of a map's output, as compact JSON text.</summary>
public sealed record IndexJson(string Json);
