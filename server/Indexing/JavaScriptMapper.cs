using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Indexing;

/// <summary>The map of a static index: its JavaScript maps, compiled in Jint.</summary>
public static class JavaScriptMapper
{
    public static IIndexMapper Create(IndexDefinition definition) =>
        throw new FeatureNotSupportedException("JavaScript maps are being built.");
}
