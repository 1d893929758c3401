using System.Buffers;
using System.Diagnostics;
using System.Text.Json;

namespace Jackdaw.Server.Queries;

/// <summary>
/// How long each stage of a query took, for <c>include timings()</c>, in RavenDB's shape:
/// <c>{"DurationInMs":n,"Timings":{"Optimizer":{...},"Staleness":{...},"Query":{"DurationInMs":n,"Timings":{"Lucene":{...},"Retriever":{...}}}}}</c>.
/// A stage is timed between <see cref="Start"/> and disposing what it returns; a stage started inside
/// another is its child.
/// </summary>
public sealed class QueryTimings
{
    private readonly Stage _root = new("", null);
    private Stage _current;

    public QueryTimings()
    {
        _current = _root;
        _root.Begin();
    }

    /// <summary>
    /// Whether the answer carries these timings (the query asked with <c>include timings()</c>);
    /// false when they are measured only for the slow-query log.
    /// </summary>
    public bool InAnswer { get; init; } = true;

    /// <summary>Times a stage (added to one of the same name: a stage may run several times).</summary>
    public Scope Start(string name)
    {
        var stage = _current.Child(name);
        stage.Begin();
        _current = stage;
        return new Scope(this, stage);
    }

    public readonly struct Scope(QueryTimings timings, Stage stage) : IDisposable
    {
        public void Dispose()
        {
            stage.End();
            timings._current = stage.Parent!;
        }
    }

    /// <summary>Writes <c>"Timings":{...}</c> (the total counted until now).</summary>
    public void Write(IBufferWriter<byte> output)
    {
        _root.End();
        using var writer = new Utf8JsonWriter(output, new JsonWriterOptions { SkipValidation = true });
        writer.WritePropertyName("Timings");
        _root.Write(writer);
        writer.Flush();
    }

    /// <summary>The timings as a JSON object, <c>{"DurationInMs":n,"Timings":{...}}</c> (the total counted until now).</summary>
    public byte[] ToJson()
    {
        _root.End();
        var output = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(output))
        {
            _root.Write(writer);
        }
        return output.WrittenSpan.ToArray();
    }

    public sealed class Stage(string name, Stage? parent)
    {
        private readonly List<Stage> _children = [];
        private long _started;
        private long _elapsed;

        public string Name { get; } = name;

        public Stage? Parent { get; } = parent;

        public Stage Child(string name)
        {
            foreach (var child in _children)
            {
                if (child.Name == name)
                {
                    return child;
                }
            }
            var stage = new Stage(name, this);
            _children.Add(stage);
            return stage;
        }

        public void Begin() => _started = Stopwatch.GetTimestamp();

        public void End() => _elapsed += Stopwatch.GetTimestamp() - _started;

        public void Write(Utf8JsonWriter writer)
        {
            writer.WriteStartObject();
            writer.WriteNumber("DurationInMs", (long)Math.Round(_elapsed * 1000.0 / Stopwatch.Frequency));
            writer.WritePropertyName("Timings");
            if (_children.Count == 0)
            {
                writer.WriteNullValue();
            }
            else
            {
                writer.WriteStartObject();
                foreach (var child in _children)
                {
                    writer.WritePropertyName(child.Name);
                    child.Write(writer);
                }
                writer.WriteEndObject();
            }
            writer.WriteEndObject();
        }
    }
}
