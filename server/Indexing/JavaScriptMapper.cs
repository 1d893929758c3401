using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.JavaScript;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing;

/// <summary>The map of a static index: its JavaScript maps, compiled in a sandboxed Jint engine.</summary>
public static class JavaScriptMapper
{
    /// <exception cref="Errors.IndexCompilationException">A map does not compile or is not <c>map('Collection', fn)</c>.</exception>
    public static IIndexMapper Create(IndexDefinition definition) => JavaScriptIndex.Compile(definition.Name, definition.Maps, additionalSources: definition.AdditionalSources);
}
