using System.Reflection;

namespace Jackdaw.Client;

/// <summary>Creates the indexes an application declares as <see cref="AbstractJavaScriptIndexCreationTask"/> classes.</summary>
public static class IndexCreation
{
    /// <summary>
    /// Creates every index of <paramref name="assembly"/>: each non-abstract subclass of
    /// <see cref="AbstractJavaScriptIndexCreationTask"/> with a parameterless constructor, all in
    /// one request. Returns the names written.
    /// </summary>
    public static async Task<string[]> CreateIndexesAsync(Assembly assembly, DocumentStore store, string? database = null, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        ArgumentNullException.ThrowIfNull(store);
        var definitions = FindTasks(assembly).Select(task => task.CreateIndexDefinition()).ToArray();
        if (definitions.Length == 0)
        {
            return [];
        }

        var maintenance = database is null ? store.Maintenance : store.Maintenance.ForDatabase(database);
        var results = await maintenance.PutIndexesAsync(definitions, token).ConfigureAwait(false);
        return [.. results.Select(r => r.Index)];
    }

    /// <summary>An instance of every index task type of <paramref name="assembly"/>, in name order.</summary>
    public static IEnumerable<AbstractJavaScriptIndexCreationTask> FindTasks(Assembly assembly)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        return assembly.GetTypes()
            .Where(t => t is { IsClass: true, IsAbstract: false, ContainsGenericParameters: false }
                && typeof(AbstractJavaScriptIndexCreationTask).IsAssignableFrom(t)
                && t.GetConstructor(Type.EmptyTypes) is not null)
            .OrderBy(t => t.FullName, StringComparer.Ordinal)
            .Select(t => (AbstractJavaScriptIndexCreationTask)Activator.CreateInstance(t)!);
    }
}
