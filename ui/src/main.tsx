/** Entry point of the web UI served at /ui/. */
import { render } from 'preact';
import { App } from './app.js';
import { installSearchShortcut } from './components/search-box.js';
import { installLinkInterceptor } from './lib/router.js';
import './styles.css';

installLinkInterceptor();
installSearchShortcut();
render(<App />, document.getElementById('app')!);
