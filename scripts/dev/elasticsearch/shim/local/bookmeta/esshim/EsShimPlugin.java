package local.bookmeta.esshim;

import java.io.Reader;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishMinimalStemFilter;
import org.apache.lucene.analysis.en.EnglishPossessiveFilter;
import org.apache.lucene.analysis.en.KStemFilter;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.apache.lucene.analysis.ngram.EdgeNGramTokenFilter;
import org.apache.lucene.analysis.pattern.PatternReplaceCharFilter;
import org.apache.lucene.analysis.reverse.ReverseStringFilter;
import org.elasticsearch.Build;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.regex.Regex;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.env.Environment;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.index.IndexSettings;
import org.elasticsearch.index.analysis.AbstractCharFilterFactory;
import org.elasticsearch.index.analysis.AbstractTokenFilterFactory;
import org.elasticsearch.index.analysis.CharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingCharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingTokenFilterFactory;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * Stand-ins for two modules that the Maven Central distribution of Elasticsearch does not ship:
 * analysis-common (asciifolding, edge_ngram, stemmer [English variants], pattern_replace; same names and
 * parameters, built on the Lucene classes that module wraps) and rest-root (GET / and HEAD /, which
 * client ping()/info() use).
 */
public class EsShimPlugin extends Plugin implements AnalysisPlugin, ActionPlugin {

    static final Setting<Boolean> ANALYSIS = Setting.boolSetting("bookmeta_shim.analysis", false, Setting.Property.NodeScope);
    static final Setting<Boolean> REST_ROOT = Setting.boolSetting("bookmeta_shim.rest_root", false, Setting.Property.NodeScope);

    private final boolean analysis;
    private final boolean restRoot;
    private volatile ClusterService clusterService;

    public EsShimPlugin(Settings settings) {
        analysis = ANALYSIS.get(settings);
        restRoot = REST_ROOT.get(settings);
    }

    @Override
    public List<Setting<?>> getSettings() {
        return List.of(ANALYSIS, REST_ROOT);
    }

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings, NamedWriteableRegistry registry, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings, SettingsFilter settingsFilter,
            IndexNameExpressionResolver resolver, Supplier<DiscoveryNodes> nodes, Predicate<NodeFeature> features) {
        return restRoot ? List.of(new RootHandler()) : List.of();
    }

    @Override
    public Map<String, AnalysisProvider<CharFilterFactory>> getCharFilters() {
        if (analysis == false) {
            return Map.of();
        }
        return Map.of("pattern_replace", AnalysisPlugin.requiresAnalysisSettings(PatternReplace::new));
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        if (analysis == false) {
            return Map.of();
        }
        return Map.of("asciifolding", AsciiFolding::new, "edge_ngram", EdgeNGram::new, "stemmer", Stemmer::new);
    }

    final class RootHandler extends BaseRestHandler {
        @Override
        public String getName() {
            return "bookmeta_shim_main_action";
        }

        @Override
        public List<Route> routes() {
            return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
        }

        @Override
        protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
            return channel -> {
                ClusterService cs = clusterService;
                Build build = Build.current();
                XContentBuilder b = channel.newBuilder();
                if (request.hasParam("pretty") == false) {
                    b.prettyPrint().lfAtEnd();
                }
                b.startObject();
                b.field("name", cs.localNode().getName());
                b.field("cluster_name", cs.getClusterName().value());
                b.field("cluster_uuid", cs.state().metadata().clusterUUID());
                b.startObject("version");
                b.field("number", build.qualifiedVersion());
                b.field("build_flavor", build.flavor());
                b.field("build_type", build.type().displayName());
                b.field("build_hash", build.hash());
                b.field("build_date", build.date());
                b.field("build_snapshot", build.isSnapshot());
                b.field("lucene_version", org.apache.lucene.util.Version.LATEST.toString());
                b.field("minimum_wire_compatibility_version", build.minWireCompatVersion());
                b.field("minimum_index_compatibility_version", build.minIndexCompatVersion());
                b.endObject();
                b.field("tagline", "You Know, for Search");
                b.endObject();
                channel.sendResponse(new RestResponse(RestStatus.OK, b));
            };
        }
    }

    static final class AsciiFolding extends AbstractTokenFilterFactory implements NormalizingTokenFilterFactory {
        private final boolean preserveOriginal;

        AsciiFolding(IndexSettings indexSettings, Environment env, String name, Settings settings) {
            super(name, settings);
            preserveOriginal = settings.getAsBoolean("preserve_original", false);
        }

        @Override
        public TokenStream create(TokenStream in) {
            return new ASCIIFoldingFilter(in, preserveOriginal);
        }

        @Override
        public TokenStream normalize(TokenStream in) {
            return new ASCIIFoldingFilter(in, false);
        }
    }

    static final class EdgeNGram extends AbstractTokenFilterFactory {
        private final int minGram;
        private final int maxGram;
        private final boolean back;
        private final boolean preserveOriginal;

        EdgeNGram(IndexSettings indexSettings, Environment env, String name, Settings settings) {
            super(name, settings);
            minGram = settings.getAsInt("min_gram", 1);
            maxGram = settings.getAsInt("max_gram", 2);
            if (minGram > maxGram) {
                throw new IllegalArgumentException("[edge_ngram] min_gram [" + minGram + "] must not exceed max_gram [" + maxGram + "]");
            }
            String side = settings.get("side", "front");
            if (side.equals("front") == false && side.equals("back") == false) {
                throw new IllegalArgumentException("invalid side: " + side);
            }
            back = side.equals("back");
            preserveOriginal = settings.getAsBoolean("preserve_original", false);
        }

        @Override
        public TokenStream create(TokenStream in) {
            TokenStream result = back ? new ReverseStringFilter(in) : in;
            result = new EdgeNGramTokenFilter(result, minGram, maxGram, preserveOriginal);
            return back ? new ReverseStringFilter(result) : result;
        }

        @Override
        public boolean breaksFastVectorHighlighter() {
            return true;
        }

        @Override
        public TokenFilterFactory getSynonymFilter() {
            throw new IllegalArgumentException("Token filter [" + name() + "] cannot be used to parse synonyms");
        }
    }

    static final class Stemmer extends AbstractTokenFilterFactory {
        private final String language;

        Stemmer(IndexSettings indexSettings, Environment env, String name, Settings settings) {
            super(name, settings);
            language = settings.get("language", settings.get("name", "porter")).toLowerCase(Locale.ROOT);
            switch (language) {
                case "porter", "english", "light_english", "lightenglish", "kstem", "minimal_english", "minimalenglish",
                    "possessive_english", "possessiveenglish" -> {
                }
                default -> throw new IllegalArgumentException(
                    "stemmer language [" + language + "] is not provided by the bookmeta shim (English only)");
            }
        }

        @Override
        public TokenStream create(TokenStream in) {
            return switch (language) {
                case "light_english", "lightenglish", "kstem" -> new KStemFilter(in);
                case "minimal_english", "minimalenglish" -> new EnglishMinimalStemFilter(in);
                case "possessive_english", "possessiveenglish" -> new EnglishPossessiveFilter(in);
                default -> new PorterStemFilter(in);
            };
        }
    }

    static final class PatternReplace extends AbstractCharFilterFactory implements NormalizingCharFilterFactory {
        private final Pattern pattern;
        private final String replacement;

        PatternReplace(IndexSettings indexSettings, Environment env, String name, Settings settings) {
            super(name);
            String p = settings.get("pattern");
            if (p == null || p.isEmpty()) {
                throw new IllegalArgumentException("pattern is missing for [" + name + "] char filter of type 'pattern_replace'");
            }
            pattern = Regex.compile(p, settings.get("flags"));
            replacement = settings.get("replacement", "");
        }

        @Override
        public Reader create(Reader in) {
            return new PatternReplaceCharFilter(pattern, replacement, in);
        }
    }
}
